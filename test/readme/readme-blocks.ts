/**
 * The shell sessions of README.md and every page under docs/, as
 * test/readme/docs-session.test.ts runs them (the convention is stated in
 * docs/operating/testing.md, "The docs run as written"):
 *
 * - Every fenced block tagged `console` or `sh` runs, in page order, in one
 *   bash session per page (variables set by one block are there for the next). Other
 *   fences (`text`, `json`, `ts`, `js`, `graphql`) never run, except a block marked
 *   `<!-- docs-test: file: <name> -->`: it is written to that file of the session's directory
 *   when the session reaches it, for the blocks after it to run (`npx tsx <name>`).
 * - `<!-- docs-test: skip: <why> -->` on the line right before a fence
 *   leaves that block out (it must say why); `<!-- docs-test: requires: postgres -->`
 *   runs it only where that server exists (a PostgreSQL database in `$DATABASE_URL`),
 *   and skips it with a printed reason elsewhere; `requires: rabbitmq`, `nats` or `redis`
 *   runs it with the run's broker of that kind in `$RABBITMQ_URL`, `$NATS_URL` or `$REDIS_URL`.
 * - A `console` block is a transcript: `$ command` (continued by a trailing
 *   `\` or an open quote), then the lines it prints. Blank lines are not compared; a line that
 *   starts with `# ` is a note to the reader, except `# exit N` (more text may follow), the
 *   command's expected exit status (0 otherwise).
 * - A `sh` block runs as one command whose output is not compared; it must exit 0.
 * - Expected and printed lines are compared after masking what changes from
 *   run to run (see `mask`); `…` in an expected line matches anything.
 */
export interface DocCommand {
  /** 1-based page line of the command's first line. */
  line: number;
  command: string;
  /** Expected output lines, null when not compared (a `sh` block). */
  expected: string[] | null;
  exitCode: number;
}

export interface DocBlock {
  /** 0-based index among the page's console and sh blocks, skipped ones included. */
  index: number;
  line: number;
  lang: 'console' | 'sh' | 'file';
  /** A `file` block: the file it is written to, relative to the session's directory, and its text. */
  file?: { name: string; text: string };
  /** The reason given by a skip marker, if any. */
  skip?: string;
  /** The server a `requires:` marker names (`postgres`), if any. */
  requires?: Requirement;
  commands: DocCommand[];
}

/** What a `requires:` marker may name: a server beyond the embedded database (a broker: one the run started, test/support/brokers.ts). */
export const REQUIREMENTS = ['postgres', 'rabbitmq', 'nats', 'redis'] as const;
export type Requirement = (typeof REQUIREMENTS)[number];

const MARKER = /^<!--\s*docs-test:\s*(skip|requires|file):\s*(.+?)\s*-->$/;
const EXIT = /^# exit (\d+)\b/;

export function docBlocks(markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)/.exec(lines[i]!);
    if (!fence) continue;
    const start = i;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.startsWith('```')) end++;
    const lang = fence[1];
    const marker = MARKER.exec(lines[start - 1]?.trim() ?? '');
    if (marker?.[1] === 'file') {
      const text = `${lines.slice(start + 1, end).join('\n')}\n`;
      blocks.push({ index: blocks.length, line: start + 1, lang: 'file', file: { name: marker[2]!, text }, commands: [] });
    } else if (lang === 'console' || lang === 'sh') {
      const body = lines.slice(start + 1, end);
      const skip = marker?.[1] === 'skip' ? marker[2] : undefined;
      const requires = marker?.[1] === 'requires' ? requirement(marker[2]!, start) : undefined;
      const commands = lang === 'sh' ? [shCommand(body, start + 2)] : consoleCommands(body, start + 2);
      blocks.push({ index: blocks.length, line: start + 1, lang, ...(skip ? { skip } : {}), ...(requires ? { requires } : {}), commands });
    }
    i = end;
  }
  return blocks;
}

function requirement(name: string, line: number): Requirement {
  if (!(REQUIREMENTS as readonly string[]).includes(name))
    throw new Error(`line ${line}: unknown requirement '${name}' (known: ${REQUIREMENTS.join(', ')})`);
  return name as Requirement;
}

/** Whether `text` ends inside a single- or double-quoted shell string (the command goes on on the next line). */
function unclosedQuote(text: string): boolean {
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
    } else if (c === '\\') i++;
    else if (quote === '"') {
      if (c === '"') quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
  }
  return quote !== undefined;
}

function shCommand(body: string[], firstLine: number): DocCommand {
  return { line: firstLine, command: body.join('\n'), expected: null, exitCode: 0 };
}

function consoleCommands(body: string[], firstLine: number): DocCommand[] {
  const commands: DocCommand[] = [];
  let current: DocCommand | undefined;
  for (let i = 0; i < body.length; i++) {
    const text = body[i]!;
    if (text.startsWith('$ ')) {
      const parts = [text.slice(2)];
      const line = firstLine + i;
      while ((parts.at(-1)!.endsWith('\\') || unclosedQuote(parts.join('\n'))) && i + 1 < body.length) parts.push(body[++i]!);
      current = { line, command: parts.join('\n'), expected: [], exitCode: 0 };
      commands.push(current);
      continue;
    }
    if (!current) throw new Error(`line ${firstLine + i}: output before any "$ " command in a console block`);
    const exit = EXIT.exec(text);
    if (exit) current.exitCode = Number(exit[1]);
    else if (text.trim() !== '' && !text.startsWith('# ')) current.expected!.push(text);
  }
  return commands;
}

/**
 * What differs between runs, replaced on both sides before comparing: the
 * server's origin, ISO timestamps and HTTP dates, prefixed ids (`org_<id>`, `req_<id>`…),
 * secrets (`sk_…_live_…`, `ut_…`, `op_tok_…`, `whsec_…`).
 */
export function mask(text: string, origin?: string): string {
  let out = origin ? text.split(origin).join('http://127.0.0.1:4000') : text;
  out = out.replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\b/g, '<time>');
  out = out.replace(/\b[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT\b/g, '<http-date>');
  out = out.replace(/\bop_tok_[A-Za-z0-9_-]+/g, 'op_tok_<secret>');
  out = out.replace(/\b(sk|pk)_([a-z0-9]+)_(live|test)_[A-Za-z0-9_-]+/g, '$1_$2_$3_<secret>');
  out = out.replace(/\but_[A-Za-z0-9_-]{8,}/g, 'ut_<secret>');
  out = out.replace(/\bwhsec_[A-Za-z0-9+/=]+/g, 'whsec_<secret>');
  out = out.replace(/\b([a-z]+)_[0-9a-f]{24}(?:[0-9a-f]{8})?\b/g, '$1_<id>');
  return out;
}

/** An expected line (already masked) as a pattern: literal, except `…`, which matches anything. */
function lineMatches(expected: string, actual: string): boolean {
  const pattern = expected
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`, 's').test(actual);
}

/**
 * How what a command printed differs from what the README shows (undefined: it
 * does not): its exit status, then each output line that does not match, as
 * expected and actual after masking. `origin` is the server's real origin.
 */
export function drift(command: DocCommand, ran: { output: string; exitCode: number }, origin: string): string | undefined {
  const problems: string[] = [];
  if (ran.exitCode !== command.exitCode) problems.push(`exit status ${ran.exitCode}, expected ${command.exitCode}`);
  if (command.expected) {
    const want = command.expected.map((l) => mask(l));
    const got = ran.output
      .split(/\r?\n/)
      .filter((l) => l.trim() !== '')
      .map((l) => mask(l, origin));
    for (let i = 0; i < Math.max(want.length, got.length); i++) {
      if (want[i] !== undefined && got[i] !== undefined && lineMatches(want[i]!, got[i]!)) continue;
      problems.push(`  output line ${i + 1}:\n    expected: ${want[i] ?? '(nothing)'}\n    actual:   ${got[i] ?? '(nothing)'}`);
    }
  } else if (problems.length) problems.push(`  printed:\n${ran.output}`);
  return problems.length ? problems.join('\n') : undefined;
}

/**
 * The README with each run command's shown output replaced by what it printed
 * (`printed`: README line of the command → its output), for README_UPDATE: a
 * shown output with `…` in it is an elision the writer chose and stays, and
 * ids are renamed everywhere to the run's (learned from the lines that line
 * up), so the session stays one consistent run. Secrets become `EXAMPLE`
 * placeholders; `# ` notes and blank lines between commands stay.
 */
export function withPrintedOutputs(markdown: string, printed: Map<number, string>): string {
  const lines = markdown.split('\n');
  const renames = new Map<string, string>();
  const learn = (shown: string[], got: string[]) => {
    for (const [i, line] of shown.entries()) {
      const [a, b] = [line.match(ID) ?? [], got[i]?.match(ID) ?? []];
      if (a.length !== b.length) continue;
      for (const [k, id] of a.entries()) if (id.split('_')[0] === b[k]!.split('_')[0] && !renames.has(id)) renames.set(id, b[k]!);
    }
  };
  const commands = docBlocks(markdown).flatMap((b) => (b.lang === 'console' ? b.commands : []));
  for (const command of commands.reverse()) {
    const output = printed.get(command.line);
    if (output === undefined) continue;
    const from = command.line - 1 + command.command.split('\n').length; // 0-based index of the first output line
    let to = from;
    while (to < lines.length && !/^(\$ |# |```)/.test(lines[to]!)) to++;
    while (to > from && lines[to - 1]!.trim() === '') to--; // blank lines before the next command stay
    const shown = lines.slice(from, to);
    const got = placeholders(output.replace(/\r/g, '').replace(/\n+$/, '')).split('\n');
    learn(shown, got);
    if (!shown.some((l) => l.includes('…'))) lines.splice(from, to - from, ...(output.trim() ? got : []));
  }
  let out = lines.join('\n');
  for (const [from, to] of renames) out = out.split(from).join(to);
  return out;
}

const ID = /\b[a-z]+_[0-9a-f]{32}\b/g;

const placeholders = (text: string) =>
  text
    .replace(/\b(sk|pk)_([a-z0-9]+)_(live|test)_[A-Za-z0-9_-]{20,}/g, '$1_$2_$3_EXAMPLExxxxxxxxxxxxxxxxxxxxxxxxxxxxx')
    .replace(/\bop_tok_[A-Za-z0-9_-]{20,}/g, 'op_tok_EXAMPLExxxxxxxxxxxxxxxxxxxxxxxxxxxx')
    .replace(/\but_[A-Za-z0-9_-]{20,}/g, 'ut_EXAMPLExxxxxxxxxxxxxxxxxxxxxxxxxxxxx')
    .replace(/\bwhsec_[A-Za-z0-9+/=]{40,}/g, 'whsec_EXAMPLExxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=');
