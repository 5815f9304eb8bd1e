/**
 * @module The docs type-check's compiler host: serves the blocks under check as virtual files, and keeps what every
 * program of a run reads the same (the parsed library, source and declaration files, and module resolutions) in
 * caches shared by all the programs made with one set of compiler options, so that a program costs a checker, not a
 * parse and a resolution of the sources and of node_modules' declarations.
 */
import ts from 'typescript';

export interface SharedHost {
  readonly host: ts.CompilerHost;
  /** The blocks under check, by virtual file name: nothing else is read from them, and none of them is cached. */
  readonly virtual: Map<string, string>;
}

const hosts = new Map<string, SharedHost>();

/**
 * The host for `options`, made at the first call and reused by every later one in this process (a cache per set of
 * options: a file parses and a module resolves the same under the same options). The files on disk do not change
 * during a test run; the blocks, which do, are never cached.
 */
export function sharedHost(options: ts.CompilerOptions): SharedHost {
  const key = JSON.stringify(options);
  const known = hosts.get(key);
  if (known !== undefined) return known;
  const host = ts.createCompilerHost(options, true);
  const virtual = new Map<string, string>();
  const files = new Map<string, ts.SourceFile | undefined>();
  const { readFile, getSourceFile } = host;
  const fileExists = remembered((fileName) => ts.sys.fileExists(fileName));
  host.fileExists = (fileName) => virtual.has(fileName) || fileExists(fileName);
  // Asked again by every program for each file it loads (a package's folders, the real path behind a link).
  host.directoryExists = remembered((path) => ts.sys.directoryExists(path));
  host.realpath = remembered((path) => ts.sys.realpath?.(path) ?? path);
  host.readFile = (fileName) => virtual.get(fileName) ?? readFile.call(host, fileName);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const text = virtual.get(fileName);
    if (text !== undefined) return ts.createSourceFile(fileName, text, languageVersion, true);
    const format = typeof languageVersion === 'object' ? languageVersion.impliedNodeFormat : undefined;
    const cacheKey = `${format ?? ''}:${fileName}`;
    if (!files.has(cacheKey))
      files.set(cacheKey, getSourceFile.call(host, fileName, languageVersion, onError, shouldCreate));
    return files.get(cacheKey);
  };
  // Without a cache of its own, each program resolves every import of the hundreds of files it loads again: as
  // much time as its checker takes.
  const canonical = (fileName: string) => host.getCanonicalFileName(fileName);
  const modules = ts.createModuleResolutionCache(host.getCurrentDirectory(), canonical, options);
  const typeReferences = ts.createTypeReferenceDirectiveResolutionCache(
    host.getCurrentDirectory(),
    canonical,
    options,
    modules.getPackageJsonInfoCache(),
  );
  // A program reads its files' package.json (to tell ESM from CommonJS) through this cache.
  host.getModuleResolutionCache = () => modules;
  host.resolveModuleNameLiterals = (
    literals,
    containingFile,
    redirected,
    compilerOptions,
    containingSource,
  ) =>
    literals.map((literal) =>
      ts.resolveModuleName(
        literal.text,
        containingFile,
        compilerOptions,
        host,
        modules,
        redirected,
        ts.getModeForUsageLocation(containingSource, literal, compilerOptions),
      ),
    );
  host.resolveTypeReferenceDirectiveReferences = (
    references,
    containingFile,
    redirected,
    compilerOptions,
    source,
  ) =>
    references.map((reference) =>
      ts.resolveTypeReferenceDirective(
        typeof reference === 'string' ? reference : reference.fileName.toLowerCase(),
        containingFile,
        compilerOptions,
        host,
        redirected,
        typeReferences,
        typeof reference === 'string'
          ? undefined
          : ts.getModeForFileReference(reference, source?.impliedNodeFormat),
      ),
    );
  const shared = { host, virtual };
  hosts.set(key, shared);
  return shared;
}

/** `answer` with its results kept: the files on disk do not change during a test run. */
function remembered<T>(answer: (path: string) => T): (path: string) => T {
  const known = new Map<string, T>();
  return (path) => {
    if (!known.has(path)) known.set(path, answer(path));
    return known.get(path) as T;
  };
}
