// The docs test's rules beyond the compiler: what a block must show so that the code a reader pastes behaves.
import ts from 'typescript';
import type { Snippet } from './markdown.js';

/** A rule a block breaks, at the line of the offending code (`file:line`, as a type error is reported). */
export interface RuleProblem {
  readonly where: string;
  readonly message: string;
}

/** Every rule, on one block (a fragment too: it is not compiled, but a reader still copies its client setup). */
export function ruleProblems(snippet: Snippet): RuleProblem[] {
  const source = ts.createSourceFile('block.ts', snippet.code, ts.ScriptTarget.Latest, true);
  const at = (node: ts.Node, message: string): RuleProblem => ({
    where: `${snippet.file}:${snippet.line + source.getLineAndCharacterOfPosition(node.getStart(source)).line}`,
    message,
  });
  return [
    ...redisClientsWithoutErrorListener(source).map((node) =>
      at(
        node,
        `a Redis client is created without .on('error', …): on a Redis outage ioredis (and node-redis) report every ` +
          `failed reconnect as an unhandled 'error' event. Bind the client to a name and attach a listener that logs.`,
      ),
    ),
    ...(snippet.mode === 'run'
      ? ambientValues(source).map((node) =>
          at(
            node,
            'a block marked run declares a value with `declare`, which has no value when it runs: define it ' +
              '(a small stub, commented as yours) instead.',
          ),
        )
      : []),
  ];
}

/** The packages whose `createClient`/`createCluster` make a node-redis client (oncely/client has a createClient too). */
const NODE_REDIS = new Set(['redis', '@redis/client']);

/**
 * The expressions that create a Redis client: `new Redis(…)`, `new IORedis(…)`, `new Cluster(…)`,
 * `new Redis.Cluster(…)`, `x.duplicate(…)` (a new ioredis connection), and node-redis' `createClient(…)` /
 * `createCluster(…)` when imported from `redis`.
 */
function isClientCreation(node: ts.Node, nodeRedisNames: ReadonlySet<string>): boolean {
  if (ts.isNewExpression(node)) {
    const callee = node.expression;
    const name = ts.isIdentifier(callee)
      ? callee.text
      : ts.isPropertyAccessExpression(callee)
        ? callee.name.text
        : '';
    return name === 'Redis' || name === 'IORedis' || name === 'Cluster';
  }
  if (ts.isCallExpression(node)) {
    const callee = node.expression;
    if (ts.isPropertyAccessExpression(callee)) return callee.name.text === 'duplicate';
    return ts.isIdentifier(callee) && nodeRedisNames.has(callee.text);
  }
  return false;
}

/** `x.on('error', …)`: the call, and what it is called on. */
function errorListenerTarget(node: ts.Node): ts.Expression | undefined {
  if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return undefined;
  const [event, listener] = node.arguments;
  if (node.expression.name.text !== 'on' || listener === undefined) return undefined;
  if (event === undefined || !ts.isStringLiteralLike(event) || event.text !== 'error') return undefined;
  return node.expression.expression;
}

/** Skips what does not change which object an expression is: `await`, parentheses, `!`, `as`, `satisfies`. */
function outerOf(node: ts.Node): ts.Node {
  let current = node;
  while (
    ts.isAwaitExpression(current.parent) ||
    ts.isParenthesizedExpression(current.parent) ||
    ts.isNonNullExpression(current.parent) ||
    ts.isAsExpression(current.parent) ||
    ts.isSatisfiesExpression(current.parent)
  )
    current = current.parent;
  return current;
}

function redisClientsWithoutErrorListener(source: ts.SourceFile): ts.Node[] {
  const nodeRedisNames = new Set<string>();
  const creations: ts.Node[] = [];
  const listenedNames = new Set<string>();
  const listenedDirectly = new Set<ts.Node>();
  const visit = (node: ts.Node) => {
    if (
      ts.isImportDeclaration(node) &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      NODE_REDIS.has(node.moduleSpecifier.text)
    ) {
      const bindings = node.importClause?.namedBindings;
      if (bindings !== undefined && ts.isNamedImports(bindings))
        for (const element of bindings.elements) {
          const imported = (element.propertyName ?? element.name).text;
          if (imported === 'createClient' || imported === 'createCluster')
            nodeRedisNames.add(element.name.text);
        }
    }
    if (isClientCreation(node, nodeRedisNames)) creations.push(node);
    const target = errorListenerTarget(node);
    if (target !== undefined) {
      if (ts.isIdentifier(target)) listenedNames.add(target.text);
      listenedDirectly.add(target);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);

  return creations.filter((creation) => {
    const outer = outerOf(creation);
    // `new Redis(url).on('error', …)`: the listener is on the new client itself.
    if (listenedDirectly.has(creation) || listenedDirectly.has(outer)) return false;
    const declaration = outer.parent;
    if (
      ts.isVariableDeclaration(declaration) &&
      declaration.initializer === outer &&
      ts.isIdentifier(declaration.name)
    )
      return !listenedNames.has(declaration.name.text);
    // Created inline (`new RedisStore({ client: new Redis() })`): nothing can listen to it.
    return true;
  });
}

/** Top-level `declare const|let|var|function|class|enum|namespace` (a `declare module '…'`/`global` is a type). */
function ambientValues(source: ts.SourceFile): ts.Node[] {
  return source.statements.filter((statement) => {
    const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) : undefined;
    if (!modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.DeclareKeyword)) return false;
    if (ts.isModuleDeclaration(statement))
      return ts.isIdentifier(statement.name) && statement.name.text !== 'global';
    return (
      ts.isVariableStatement(statement) ||
      ts.isFunctionDeclaration(statement) ||
      ts.isClassDeclaration(statement) ||
      ts.isEnumDeclaration(statement)
    );
  });
}
