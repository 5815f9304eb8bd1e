// A Stryker ignorer (https://stryker-mutator.io/docs/stryker-js/disable-mutants/#using-an-ignore-plugin) for the
// one kind of code `npm run mutate` leaves alone on purpose: the human-readable text of an error message. Text
// is not behaviour: callers and adapters branch on an error's class, `code`, `name` and fields (`reason`,
// `retryAfterMs`, `outcomeStored`, `cause`), which stay mutated; a test that pinned every sentence would break on
// every rewording and protect nothing a user relies on. docs/mutation.md lists this exclusion.
//
// Ignored (with everything inside them):
//   - the message argument of `new SomethingError(...)`: every string or template argument, except the first
//     one of `InvalidKeyError`, which is its machine-readable `reason` ('missing', 'too-long', …)
//   - the argument of the stores' `corrupt(...)` helpers, which only build a CorruptRecordError's message
//   - the `detail` of an HTTP problem answer (`problemAnswer(type, detail, …)`): RFC 9457 makes it the
//     human-readable explanation; the `type`, `title`, `status`, headers and extension members stay mutated
//   - in the constructor of an error class (`class X extends SomethingError`), the text arguments of `super(...)`
//     after the first: `super('ONCELY_IN_PROGRESS', `retry in ${retryAfterMs} ms`)` keeps its code mutated
import { declareValuePlugin, PluginKind } from '@stryker-mutator/api/plugin';

const REASON_FIRST = new Set(['InvalidKeyError']);

const isText = (node) =>
  node.type === 'StringLiteral' ||
  node.type === 'TemplateLiteral' ||
  (node.type === 'BinaryExpression' && node.operator === '+' && (isText(node.left) || isText(node.right)));

function messageArgument(path) {
  if (path.listKey !== 'arguments' || !isText(path.node)) return undefined;
  const call = path.parentPath;
  const callee = call.node.callee;
  if (callee.type === 'Super') {
    const owner = path.findParent((parent) => parent.isClass());
    const base = owner?.node.superClass;
    if (path.key === 0 || base?.type !== 'Identifier' || !base.name.endsWith('Error')) return undefined;
    return `message text of ${owner.node.id?.name ?? 'an error class'}`;
  }
  if (callee.type !== 'Identifier') return undefined;
  if (call.isNewExpression() && callee.name.endsWith('Error')) {
    if (REASON_FIRST.has(callee.name) && path.key === 0) return undefined;
    return `message text of ${callee.name}`;
  }
  if (call.isCallExpression() && callee.name === 'corrupt') return 'message text of a CorruptRecordError';
  if (call.isCallExpression() && callee.name === 'problemAnswer' && path.key === 1)
    return 'detail text of a problem answer';
  return undefined;
}

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, 'message-text', {
    shouldIgnore(path) {
      return messageArgument(path);
    },
  }),
];
