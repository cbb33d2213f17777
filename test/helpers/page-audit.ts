import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };

/**
 * Screenshots of an end-user page at desktop and phone widths (under test-artefacts/<folder>, git-ignored), an
 * axe-core audit at each width without serious or critical findings, and no sideways scroll on a phone. axe runs
 * through the DevTools protocol, which the pages' CSP (no script at all) does not govern.
 */
export async function auditPage(page: Page, folder: string, name: string): Promise<void> {
  const artefacts = join(process.cwd(), 'test-artefacts', folder);
  mkdirSync(artefacts, { recursive: true });
  for (const [label, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: join(artefacts, `${name}-${label}.png`), fullPage: true });
    await page.evaluate(AXE_SOURCE);
    // A string: it runs in the page, whose globals (axe, document) this file's types do not know.
    const violations = await page.evaluate<{ id: string; impact: string | null; help: string; nodes: number }[]>(
      'axe.run(document).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })))',
    );
    const blocking = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(blocking, `${name} at ${label}: ${JSON.stringify(violations)}`).toEqual([]);
  }
  await page.setViewportSize(WIDTHS.phone);
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
  expect(overflow, `${name} scrolls sideways on a phone`).toBeLessThanOrEqual(0);
  await page.setViewportSize(WIDTHS.desktop);
}
