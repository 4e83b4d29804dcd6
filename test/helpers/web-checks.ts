/** Checks every web app page must pass in the browser tests: labels, and no sideways scrolling. */
import type { Page } from 'playwright-core';

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
