// TypeScript's own module resolution, as ground truth for retrylint's resolver.
//
// Request (stdin, one per line): {"id": any, "root": "/abs/project", "file": "src/a.ts", "specifier": "~/lib/retry"}
// Answer (stdout, same order):
//   {"id", "resolved": "src/lib/retry.ts" | "/abs/outside.ts" | null, "mapped": …, "mapping": null | "<name>",
//    "project": "tsconfig.src.json" | null, "mode": "esm" | "cjs" | null}
//
// For each importing file, the project is found the way the editor's TypeScript (tsserver
// 5.9) finds a file's default project: the nearest tsconfig.json (else jsconfig.json) whose
// files include it, or a project it references (depth first), else the same search one
// directory up; none: TypeScript's defaults (plus allowJs, as an inferred project has).
// `.vue` and `.svelte` files are project files as vue-tsc and svelte-check make them
// (extraFileExtensions). The config is parsed with ts.getParsedCommandLineOfConfigFile
// (follows `extends`), the import's mode with ts.getModeForUsageLocation, and the specifier
// resolved with ts.resolveModuleName(specifier, file, options, ts.sys, undefined, undefined, mode).
//
// `mapped` applies, to TypeScript's answer, the two mappings retrylint documents (README,
// "Resolution across files"), and nothing else:
//   - "build-output": a file in a package's dist/, build/, lib/ or out/ (not in node_modules)
//     stands for the source it is built from, src/<same path> (else <same path> in the package,
//     for a build rooted there) with a TypeScript extension, when that file exists
//     (`dist/x.d.ts`, `dist/x.js` → `src/x.ts`; `dist/src/x.d.ts` → `src/x.ts`).
//   - "declaration-implementation": a declaration `x.d.ts` (`.d.mts`, `.d.cts`) stands for
//     the implementation beside it, `x.js` (`.mjs`, `.cjs`), when that exists outside
//     node_modules: retrylint reads the code, not its types.
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import ts from "typescript";

const extraFileExtensions = [
  { extension: ".vue", isMixedContent: true, scriptKind: ts.ScriptKind.Deferred },
  { extension: ".svelte", isMixedContent: true, scriptKind: ts.ScriptKind.Deferred },
];

const parsedConfigs = new Map();
function parseConfig(configPath) {
  if (parsedConfigs.has(configPath)) return parsedConfigs.get(configPath);
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} };
  let parsed;
  try {
    parsed = ts.getParsedCommandLineOfConfigFile(configPath, undefined, host, undefined, undefined, extraFileExtensions);
  } catch {
    parsed = undefined;
  }
  parsedConfigs.set(configPath, parsed);
  return parsed;
}

function including(configPath, file, visited) {
  if (visited.has(configPath) || visited.size > 64) return undefined;
  visited.add(configPath);
  const parsed = parseConfig(configPath);
  if (!parsed) return undefined;
  if (parsed.fileNames.some((f) => path.resolve(f) === file)) return { configPath, parsed };
  for (const ref of parsed.projectReferences ?? []) {
    const found = including(ts.resolveProjectReferencePath(ref), file, visited);
    if (found) return found;
  }
  return undefined;
}

function projectFor(file) {
  let dir = path.dirname(file);
  for (;;) {
    for (const name of ["tsconfig.json", "jsconfig.json"]) {
      const config = path.join(dir, name);
      if (ts.sys.fileExists(config)) {
        const found = including(config, file, new Set());
        if (found) return found;
        break;
      }
    }
    if (path.basename(dir) === "node_modules") break;
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

function scriptText(file) {
  const text = fs.readFileSync(file, "utf8");
  if (!file.endsWith(".vue") && !file.endsWith(".svelte")) return text;
  return [...text.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1]).join("\n");
}

/// The mode TypeScript resolves this import in: the program's own computation, for the
/// first import or export declaration of the file with this specifier.
function modeFor(file, specifier, options) {
  const impliedNodeFormat = ts.getImpliedNodeFormatForFile(file, undefined, ts.sys, options);
  const source = ts.createSourceFile(
    file,
    scriptText(file),
    { languageVersion: ts.ScriptTarget.Latest, impliedNodeFormat },
    true,
  );
  let usage;
  const visit = (node) => {
    if (usage) return;
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier
      && ts.isStringLiteral(node.moduleSpecifier) && node.moduleSpecifier.text === specifier) {
      usage = node.moduleSpecifier;
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (!usage) return { mode: undefined, found: false };
  return { mode: ts.getModeForUsageLocation(source, usage, options), found: true };
}

function packageDirAbove(file) {
  let dir = path.dirname(file);
  for (;;) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function map(resolved) {
  if (!resolved || resolved.includes("/node_modules/")) return { mapped: resolved, mapping: null };
  const pkg = packageDirAbove(resolved);
  if (pkg) {
    const rel = path.relative(pkg, resolved).split(path.sep);
    const outputs = ["dist", "build", "lib", "out"];
    const m = rel.slice(1).join("/").match(/^(.*?)(\.d\.ts|\.d\.mts|\.d\.cts|\.js|\.mjs|\.cjs|\.jsx)$/);
    if (outputs.includes(rel[0]) && m) {
      const candidates = { ".mjs": [".mts"], ".d.mts": [".mts"], ".cjs": [".cts"], ".d.cts": [".cts"], ".jsx": [".tsx", ".ts"] }[m[2]] ?? [".ts", ".tsx"];
      // The output mirrors src/, or the package itself (a build rooted there: dist/src/x.js).
      for (const stem of [path.join(pkg, "src", m[1]), path.join(pkg, m[1])]) {
        for (const ext of candidates) {
          if (fs.existsSync(stem + ext)) return { mapped: stem + ext, mapping: "build-output" };
        }
      }
    }
  }
  for (const [decl, js] of [[".d.ts", ".js"], [".d.mts", ".mjs"], [".d.cts", ".cjs"]]) {
    if (resolved.endsWith(decl)) {
      const implementation = resolved.slice(0, -decl.length) + js;
      if (fs.existsSync(implementation)) return { mapped: implementation, mapping: "declaration-implementation" };
    }
  }
  return { mapped: resolved, mapping: null };
}

function shown(root, p) {
  if (!p) return null;
  const rel = path.relative(root, p);
  return rel.startsWith("..") || path.isAbsolute(rel) ? p : rel.split(path.sep).join("/");
}

const modeName = (mode) => (mode === ts.ModuleKind.ESNext ? "esm" : mode === ts.ModuleKind.CommonJS ? "cjs" : null);

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  const request = JSON.parse(line);
  const root = path.resolve(request.root);
  const file = path.join(root, request.file);
  let answer;
  try {
    const project = projectFor(file);
    const options = project ? project.parsed.options : { allowJs: true };
    const { mode } = modeFor(file, request.specifier, options);
    const result = ts.resolveModuleName(request.specifier, file, options, ts.sys, undefined, undefined, mode);
    const resolved = result.resolvedModule?.resolvedFileName;
    const { mapped, mapping } = map(resolved);
    answer = {
      id: request.id,
      resolved: shown(root, resolved),
      mapped: shown(root, mapped),
      mapping,
      project: project ? shown(root, project.configPath) : null,
      mode: modeName(mode),
    };
  } catch (error) {
    answer = { id: request.id, error: String(error?.stack ?? error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
