#!/usr/bin/env node
// Lints graphmem's .cypher files with Neo4j's own Cypher parser and semantic analysis
// (@neo4j-cypher/language-support, the engine behind Neo4j's editors), as Cypher 5 (or Cypher 25
// for a statement that starts with `CYPHER 25`).
//
// Usage:   node tools/cypher-lint/lint.mjs FILE.cypher [FILE.cypher ...]
// Output:  one JSON object per file and line (JSON Lines):
//            {"file": ..., "diagnostics": [{"line", "column", "message", "severity", "statement"}]}
//          line and column are 1-based positions in the file; severity is "error", "warning",
//          "info" or "hint"; statement is the 1-based index of the statement in the file.
// Exit:    0 clean, 1 if any file has an error or a warning, 2 on bad usage / unreadable file.
//
// File convention (cypher/**/*.cypher, the top-level folder of the repository):
//   * ONE statement per file, sent to the driver verbatim: no trailing ';' and no ';'
//     between statements.
//   * Exception, for migration/schema files: several statements separated by a line that
//     holds only `// ---` (it is a Cypher comment, so each piece is still valid Cypher).
//     Each piece is linted separately and must hold exactly one statement; the loader
//     splits on the same line.
//   * Comments (`// ...`, `/* ... */`) are allowed anywhere; a piece holding only comments
//     is ignored, but a file must hold at least one statement.
//
// Parameters: every `$name` / `$`quoted name`` in a statement (found by regex) is declared
// in the dbSchema, so the linter checks the query, not the runtime values.
//
// Procedures and functions: neo4j5-builtins.json (made by gen-builtins.mjs from the
// catalogue of a real Neo4j server that the package ships) declares Neo4j's built-in
// procedures and functions, e.g. db.index.vector.queryNodes, db.index.fulltext.queryNodes,
// db.awaitIndexes, vector.similarity.cosine. With them declared the linter checks argument
// types and YIELD columns against the real signatures, and flags unknown, misspelt or plugin
// (APOC, GDS) procedures and functions as errors. Labels, relationship types and property
// keys are not declared, so they are not checked.
import { readFileSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { lintCypherQuery, parseStatementsStrs } from '@neo4j-cypher/language-support';

const CYPHER_VERSION = 'CYPHER 5';
const CYPHER_25 = 'CYPHER 25';
const SEPARATOR = /^[ \t]*\/\/[ \t]*---[ \t]*$/;
const PARAM = /\$(?:`([^`]+)`|([A-Za-z_][A-Za-z0-9_]*)|([0-9]+))/g;
const SEVERITY = { 1: 'error', 2: 'warning', 3: 'info', 4: 'hint' };

const builtins = JSON.parse(readFileSync(new URL('./neo4j5-builtins.json', import.meta.url), 'utf8'));

/** Splits a file into pieces on `// ---` lines, keeping each piece's offset in the file. */
export function splitStatements(text) {
  const pieces = [];
  let start = 0;
  let pos = 0;
  for (const line of text.split(/(?<=\n)/)) {
    if (SEPARATOR.test(line.replace(/\r?\n$/, ''))) {
      pieces.push({ text: text.slice(start, pos), offset: start });
      start = pos + line.length;
    }
    pos += line.length;
  }
  pieces.push({ text: text.slice(start), offset: start });
  return pieces;
}

function stripComments(text) {
  // good enough to tell "only comments/whitespace" apart from a statement
  return text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/[^\n]*/g, '')
    .trim();
}

export function parametersOf(text) {
  const params = {};
  for (const m of text.matchAll(PARAM)) {
    params[m[1] ?? m[2] ?? m[3]] = null; // any value but undefined declares it
  }
  return params;
}

function position(text, offset) {
  const before = text.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  return { line, column };
}

export function lintText(text) {
  const diagnostics = [];
  const add = (fileOffset, severity, message, statement) =>
    diagnostics.push({ ...position(text, fileOffset), message, severity, statement });

  let statementNo = 0;
  for (const piece of splitStatements(text)) {
    const code = stripComments(piece.text);
    if (code.length === 0) continue;
    statementNo += 1;
    const firstCode = piece.offset + piece.text.search(/\S/);

    if (/;\s*$/.test(code)) {
      const semi = piece.offset + piece.text.lastIndexOf(';');
      add(semi, 'error', "Drop the trailing ';': each statement is sent to the driver as-is.", statementNo);
    }
    let count = 1;
    try {
      count = parseStatementsStrs(piece.text).filter((s) => stripComments(s).replace(/;/g, '').trim()).length;
    } catch {
      /* the lint below reports the syntax error */
    }
    if (count > 1) {
      add(
        firstCode,
        'error',
        `${count} statements in one piece: one statement per file, or separate the statements ` +
          'of a migration file with a line holding only `// ---`.',
        statementNo,
      );
    }

    // A statement may opt into Cypher 25 with a `CYPHER 25` prefix (Neo4j 2026.01+ only
    // features: SEARCH, filtered vector indexes); it is checked against the same catalogue.
    const dbSchema = {
      defaultLanguage: CYPHER_VERSION,
      parameters: parametersOf(piece.text),
      procedures: { [CYPHER_VERSION]: builtins.procedures, [CYPHER_25]: builtins.procedures },
      functions: { [CYPHER_VERSION]: builtins.functions, [CYPHER_25]: builtins.functions },
    };
    const { diagnostics: found } = lintCypherQuery(piece.text, dbSchema, { consoleCommandsEnabled: false });
    for (const d of found) {
      let local = d.offsets?.start;
      if (typeof local !== 'number' || local < 0) {
        // fall back on the 0-based LSP range
        const lines = piece.text.split('\n');
        const l = Math.min(Math.max(d.range?.start?.line ?? 0, 0), lines.length - 1);
        local = lines.slice(0, l).reduce((n, s) => n + s.length + 1, 0) + (d.range?.start?.character ?? 0);
      }
      add(piece.offset + local, SEVERITY[d.severity] ?? 'error', d.message, statementNo);
    }
  }
  if (statementNo === 0) {
    diagnostics.push({ line: 1, column: 1, message: 'No Cypher statement in this file.', severity: 'error', statement: 0 });
  }
  diagnostics.sort((a, b) => a.line - b.line || a.column - b.column);
  return diagnostics;
}

function main(argv) {
  if (argv.length === 0 || argv.includes('-h') || argv.includes('--help')) {
    process.stderr.write('usage: node lint.mjs FILE.cypher [FILE.cypher ...]\n');
    return 2;
  }
  let failed = false;
  let unreadable = false;
  for (const file of argv) {
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      process.stdout.write(
        JSON.stringify({ file, diagnostics: [{ line: 0, column: 0, message: `cannot read: ${e.message}`, severity: 'error', statement: 0 }] }) + '\n',
      );
      unreadable = true;
      continue;
    }
    const diagnostics = lintText(text);
    if (diagnostics.some((d) => d.severity === 'error' || d.severity === 'warning')) failed = true;
    process.stdout.write(JSON.stringify({ file, diagnostics }) + '\n');
  }
  return unreadable ? 2 : failed ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  process.exitCode = main(process.argv.slice(2));
}
