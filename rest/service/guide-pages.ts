import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, resolve } from 'node:path';

/** The guides' folder: docs/ of this repository, read from disk (the server serves them as they are checked out). */
export const DOCS_DIR = resolve(import.meta.dirname, '../../docs');

/**
 * Every Markdown page under docs/ (paths relative to it, `/`-separated), in the order docs/README.md (the map of
 * the docs) first links them; pages it does not link come after, alphabetically. The docs test runs the pages in
 * this order and /docs lists them in it.
 */
export function guidePages(dir = DOCS_DIR): string[] {
  const all = markdownFiles(dir).sort();
  const map = readFileSync(join(dir, 'README.md'), 'utf8');
  const linked = [...map.matchAll(/\]\(([^)#\s]+\.md)(?:#[^)]*)?\)/g)].map((m) => posix.normalize(m[1]!));
  const order = ['README.md', ...linked].filter((p, i, a) => all.includes(p) && a.indexOf(p) === i);
  return [...order, ...all.filter((p) => !order.includes(p))];
}

function markdownFiles(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return markdownFiles(dir, path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}
