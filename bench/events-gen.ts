/** Realistic synthetic events (≈30 properties, browser-like) for benchmarks. */
import { v7 as uuidv7 } from 'uuid';

const BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge'];
const OS = ['Mac OS X', 'Windows', 'Linux', 'iOS', 'Android'];
const EVENTS = ['$pageview', '$pageview', '$pageview', '$autocapture', 'signed_up', 'checkout_started', 'video_played', '$pageleave'];
const PATHS = ['/', '/pricing', '/docs', '/blog/launch', '/signup', '/app/dashboard', '/app/settings'];
const COUNTRIES_IPS = ['81.2.69.142', '89.160.20.112', '8.8.8.8', '175.16.199.1', '216.160.83.56'];

export function makeEvent(i: number, distinctIds: number, now = Date.now()): Record<string, unknown> {
  const user = `user-${i % distinctIds}`;
  const path = PATHS[i % PATHS.length];
  const event = i % 97 === 0 ? '$identify' : EVENTS[i % EVENTS.length];
  const properties: Record<string, unknown> = {
    $current_url: `https://example.com${path}?ref=${i % 13}`,
    $host: 'example.com',
    $pathname: path,
    $browser: BROWSERS[i % BROWSERS.length],
    $browser_version: 100 + (i % 30),
    $os: OS[i % OS.length],
    $os_version: `${10 + (i % 5)}.${i % 3}`,
    $device_type: i % 3 === 0 ? 'Mobile' : 'Desktop',
    $screen_height: 1080,
    $screen_width: 1920,
    $viewport_height: 900,
    $viewport_width: 1440,
    $lib: 'web',
    $lib_version: '1.449.2',
    $insert_id: `ins-${i}`,
    $time: now / 1000,
    $session_id: `sess-${Math.floor(i / 20)}`,
    $window_id: `win-${Math.floor(i / 40)}`,
    $pageview_id: `pv-${i}`,
    $referrer: i % 4 === 0 ? 'https://google.com' : '$direct',
    $referring_domain: i % 4 === 0 ? 'google.com' : '$direct',
    $timezone: 'Europe/London',
    $raw_user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120 Safari/537.36',
    $ip: COUNTRIES_IPS[i % COUNTRIES_IPS.length],
    plan: i % 5 === 0 ? 'pro' : 'free',
    price: (i % 50) * 1.5,
    is_trial: i % 2 === 0,
    item_count: i % 9,
    utm_source: i % 6 === 0 ? 'newsletter' : undefined,
    title: `Page ${path}`,
  };
  if (event === '$identify') {
    properties.$set = { email: `${user}@example.com`, plan: properties.plan };
    properties.$set_once = { first_seen_path: path };
  }
  return { event, distinct_id: user, uuid: uuidv7(), timestamp: new Date(now - (i % 1000)).toISOString(), properties };
}
