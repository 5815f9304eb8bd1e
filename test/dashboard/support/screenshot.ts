// Takes the docs' screenshot of a running dashboard: `node --import tsx test/dashboard/support/screenshot.ts
// <url with #token=…> docs/dashboard.png`, against `oncely demo --store postgres --dashboard` after a minute of
// traffic (docs/dashboard.md says so).
import { launch } from './browser.js';

const [url, out] = process.argv.slice(2);
if (url === undefined || out === undefined) throw new Error('usage: screenshot.ts <url> <out.png>');
const browser = await launch();
try {
  const page = await browser.context.newPage();
  await page.goto(url);
  await page.getByTestId('status').filter({ hasText: 'live' }).waitFor();
  await page.waitForTimeout(2_500);
  await page.screenshot({ path: out, fullPage: true });
} finally {
  await browser.close();
}
