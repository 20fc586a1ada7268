/**
 * The Markdown the guides under docs/ are written in, rendered to HTML for /docs: headings (with GitHub's anchor
 * ids, so `page.md#section` links keep working), paragraphs, fenced code, pipe tables, flat lists, block quotes,
 * and inline code, links, images, bold and italic. Nothing else is needed by the guides, so no dependency: the
 * guides are ours, but every character of them is escaped all the same (no raw HTML passes; HTML comments, the
 * docs test's markers, are dropped).
 *
 * `link` decides where each link or image points: it gets the written target and answers the URL to use, or null
 * for a target that is not served (a file outside docs/), which renders as its text alone.
 */
export interface RenderOptions {
  link(target: string): string | null;
}

export interface Rendered {
  html: string;
  /** The first `# ` heading's text. */
  title: string;
}

export function renderMarkdown(markdown: string, options: RenderOptions): Rendered {
  const lines = markdown.replace(/<!--[\s\S]*?-->\n?/g, '').split('\n');
  const out: string[] = [];
  const ids = new Map<string, number>();
  let title = '';
  const inline = (s: string) => renderInline(s, options);
  for (let i = 0; i < lines.length; ) {
    const line = lines[i]!;
    const fence = /^```(\S*)\s*$/.exec(line);
    if (fence) {
      let end = i + 1;
      while (end < lines.length && !lines[end]!.startsWith('```')) end++;
      const code = lines.slice(i + 1, end).join('\n');
      const lang = fence[1] ? ` class="language-${escapeHtml(fence[1])}"` : '';
      out.push(`<pre><code${lang}>${escapeHtml(code)}</code></pre>`);
      i = end + 1;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*$/.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      const plain = plainText(heading[2]!);
      const base = slug(plain);
      const seen = ids.get(base) ?? 0;
      ids.set(base, seen + 1);
      const id = seen ? `${base}-${seen}` : base;
      if (level === 1 && !title) title = plain;
      out.push(`<h${level} id="${id}">${inline(heading[2]!)}</h${level}>`);
      i++;
      continue;
    }
    if (line.startsWith('|') && /^\|\s*:?-{3,}/.test(lines[i + 1] ?? '')) {
      const rows: string[][] = [];
      let end = i;
      while (end < lines.length && lines[end]!.startsWith('|')) rows.push(cells(lines[end++]!));
      const [head, , ...body] = rows;
      const row = (cols: string[], tag: string) => `<tr>${cols.map((c) => `<${tag}>${inline(c)}</${tag}>`).join('')}</tr>`;
      out.push(
        `<div class="table"><table><thead>${row(head!, 'th')}</thead><tbody>${body.map((r) => row(r, 'td')).join('')}</tbody></table></div>`,
      );
      i = end;
      continue;
    }
    const item = /^(\s*)([-*]|\d+\.)\s+/.exec(line);
    if (item) {
      const ordered = /\d/.test(item[2]!);
      const items: string[] = [];
      let end = i;
      while (end < lines.length) {
        const m = /^(\s*)([-*]|\d+\.)\s+(.*)$/.exec(lines[end]!);
        if (m) items.push(m[3]!);
        else if (/^\s+\S/.test(lines[end]!) && items.length) items[items.length - 1] += ` ${lines[end]!.trim()}`;
        else break;
        end++;
      }
      const tag = ordered ? 'ol' : 'ul';
      out.push(`<${tag}>${items.map((it) => `<li>${inline(it)}</li>`).join('')}</${tag}>`);
      i = end;
      continue;
    }
    if (line.startsWith('>')) {
      const quoted: string[] = [];
      while (i < lines.length && lines[i]!.startsWith('>')) quoted.push(lines[i++]!.replace(/^>\s?/, ''));
      out.push(`<blockquote><p>${inline(quoted.join(' '))}</p></blockquote>`);
      continue;
    }
    if (line.trim() === '') {
      i++;
      continue;
    }
    const paragraph: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== '' && !startsBlock(lines[i]!, lines[i + 1])) paragraph.push(lines[i++]!.trim());
    if (!paragraph.length) paragraph.push(lines[i++]!.trim()); // a line that only looked like a block's start
    out.push(`<p>${inline(paragraph.join(' '))}</p>`);
  }
  return { html: out.join('\n'), title };
}

function startsBlock(line: string, next: string | undefined): boolean {
  return (
    /^```/.test(line) ||
    /^#{1,6}\s/.test(line) ||
    /^\s*([-*]|\d+\.)\s+/.test(line) ||
    line.startsWith('>') ||
    (line.startsWith('|') && /^\|\s*:?-{3,}/.test(next ?? ''))
  );
}

/** A table row's cells: split on `|` outside code spans (`a|b` in backticks stays one cell), `\|` kept as `|`. */
function cells(row: string): string[] {
  const out: string[] = [];
  let cell = '';
  let code = false;
  for (let i = 0; i < row.length; i++) {
    const c = row[i]!;
    if (c === '\\' && row[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (c === '`') {
      code = !code;
      cell += c;
    } else if (c === '|' && !code) {
      out.push(cell.trim());
      cell = '';
    } else cell += c;
  }
  if (cell.trim()) out.push(cell.trim());
  return out.slice(1);
}

/** GitHub's heading anchors: lower case, punctuation other than `-` and `_` dropped, spaces as hyphens. */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Inline markup: code spans first (their content is literal), then images, links, bold and italic. */
function renderInline(source: string, options: RenderOptions): string {
  const codes: string[] = [];
  let s = source.replace(/`([^`]+)`/g, (_, code: string) => `\uE000${codes.push(`<code>${escapeHtml(code)}</code>`) - 1}\uE000`);
  s = escapeHtml(s);
  s = s.replace(/!\[([^\]]*)\]\(([^)\s]+)\)/g, (_, alt: string, target: string) => {
    const url = options.link(unescapeHtml(target));
    return url ? `<img src="${escapeHtml(url)}" alt="${alt}" loading="lazy">` : alt;
  });
  s = s.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label: string, target: string) => {
    const url = options.link(unescapeHtml(target));
    if (!url) return label;
    const external = /^https?:/.test(url) ? ' rel="noopener noreferrer"' : '';
    return `<a href="${escapeHtml(url)}"${external}>${label}</a>`;
  });
  s = s.replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
  s = s.replace(/(^|[^*\w])\*([^*\s][^*]*)\*(?!\w)/g, '$1<em>$2</em>');
  return s.replace(/\uE000(\d+)\uE000/g, (_, n: string) => codes[Number(n)]!);
}

/** What a reader sees of inline markup, for titles and anchors. */
export function plainText(source: string): string {
  return source
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim();
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const unescapeHtml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&gt;/g, '>')
    .replace(/&lt;/g, '<')
    .replace(/&amp;/g, '&');
