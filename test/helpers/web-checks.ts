/** Checks every web app page must pass in the browser tests: labels, and no sideways scrolling. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

/**
 * Where the browser tests save their screenshots: the README's `docs/screenshots` only when
 * SIGHTLINE_UPDATE_SCREENSHOTS=1, so that a test run leaves the clone unchanged.
 */
export const SCREENSHOTS =
  process.env.SIGHTLINE_UPDATE_SCREENSHOTS === '1'
    ? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/screenshots')
    : fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-screenshots-'));

/** Form controls without a label a screen reader could read out. */
export function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('input:not([type=hidden]):not([hidden]), select, textarea, button'))
      .filter((el) => {
        const control = el as HTMLInputElement;
        if (control.labels && control.labels.length > 0 && control.labels[0].textContent!.trim()) return false;
        if (el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')) return false;
        return !(el.tagName === 'BUTTON' && el.textContent!.trim());
      })
      .map((el) => el.outerHTML.slice(0, 120)),
  );
}

/**
 * null when the page does not scroll sideways; otherwise by how much, and the elements that
 * stick out (those not inside a box that scrolls or clips them, or positioned outside it).
 */
export function sidewaysOverflow(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const overflow = document.documentElement.scrollWidth - width;
    if (overflow <= 0) return null;
    const contained = (el: Element) => {
      if (['absolute', 'fixed'].includes(getComputedStyle(el).position)) return false;
      for (let up = el.parentElement; up; up = up.parentElement) if (getComputedStyle(up).overflowX !== 'visible') return true;
      return false;
    };
    const culprits = Array.from(document.querySelectorAll('body *'))
      .filter((el) => el.getBoundingClientRect().right > width + 1 && !contained(el))
      .slice(0, 5)
      .map((el) => el.outerHTML.slice(0, 100));
    return `scrolls sideways by ${overflow} px: ${culprits.join('\n')}`;
  });
}

/** Signs in through the login page and waits for the project's first page (Activity). */
export async function signIn(page: Page, serverUrl: string, projectId: number, email: string, password: string): Promise<void> {
  await page.goto(`${serverUrl}/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(new RegExp(`/project/${projectId}/activity$`));
}
