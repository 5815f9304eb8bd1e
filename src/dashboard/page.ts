/**
 * @module The dashboard's HTML: a shell that holds no data (the script fetches it) with the script and stylesheet
 * bundled at build time, so the page loads nothing from elsewhere.
 */
import type { ResolvedDashboard } from './options.js';
import { script, style } from './ui.generated.js';

/** The page's script and stylesheet, bundled from `ui/` by scripts/embed-assets.mjs at build time (no CDN). */
export const SCRIPT: string = script;
export const STYLE: string = style;

/**
 * The page shell. It holds no data (the script fetches it), so it needs no token; the base path is the one
 * value spliced in, and options.ts allows only characters that need no escaping in an attribute or a URL.
 */
export function pageHtml(options: ResolvedDashboard): string {
  const base = options.basePath;
  return `<!doctype html>
<html lang="en" data-base="${base}" data-token-reads="${options.readsNeedToken}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>oncely dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${base}/app.css">
</head>
<body>
<div id="app"><p class="loading">Loading the dashboard…</p></div>
<script src="${base}/app.js" defer></script>
</body>
</html>
`;
}
