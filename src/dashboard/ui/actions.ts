/**
 * @module The page's action buttons: each POSTs one action, asks the operator first for those that cannot be undone,
 * and reports the server's answer; the server decides whether the action is allowed.
 */
import { postAction } from './api.js';
import { h } from './dom.js';

let refresh: () => void = () => {};
let toast: (message: string, ok: boolean) => void = () => {};

/** Wired by app.ts: what to call after an action (redraw now) and how to tell the operator its answer. */
export function wireActions(options: {
  refresh: () => void;
  toast: (message: string, ok: boolean) => void;
}): void {
  refresh = options.refresh;
  toast = options.toast;
}

/**
 * A button that POSTs one action. The server decides (token, origin, actions on); the page only asks first for
 * the ones that cannot be undone.
 */
export function actionButton(
  label: string,
  name: 'replay' | 'discard' | 'release' | 'delete',
  body: unknown,
  confirmText?: string,
): HTMLButtonElement {
  const button = h('button', { type: 'button', class: `action ${name}`, 'data-action': name }, label);
  button.addEventListener('click', async () => {
    if (confirmText !== undefined && !window.confirm(confirmText)) return;
    button.disabled = true;
    try {
      const result = await postAction(name, body);
      toast(result.message, result.ok);
    } catch (error) {
      toast(error instanceof Error ? error.message : String(error), false);
    } finally {
      button.disabled = false;
      refresh();
    }
  });
  return button;
}
