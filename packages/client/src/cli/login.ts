import type { Command } from 'commander';
import { ScopeClient } from '../index.ts';
import { DEFAULT_ORIGIN, type ProfilesFile, profilesFile, readProfiles, required, UsageError, writeProfiles } from './credentials.ts';
import { print, table } from './output.ts';
import { creds, run } from './program.ts';

/**
 * `platform login`, `logout`, `profiles` and `whoami`: a key checked once against Surface A's `/smoke` (which answers for any
 * valid platform token, whatever its scopes) and saved as a named profile, so later commands need no flag or
 * variable. The key comes from `--api-key`, else PLATFORM_API_KEY, else standard input (typed without echo on a
 * terminal, or piped: `printenv KEY | platform login`), never from a saved profile.
 */
export function registerLoginCommands(program: Command): void {
  program
    .command('login')
    .description('check an API key with the server and save it with the origin as a profile (--profile, default "default")')
    .option('--default', 'make this profile the default one (the first profile saved always is)')
    .action(
      run(async (g, o: { default?: boolean }) => {
        const file = profilesFile();
        const saved = readProfiles(file); // refuses a file others can read before a key is asked for
        const name = g.profile ?? 'default';
        const origin = (g.origin ?? process.env.PLATFORM_ORIGIN ?? saved.profiles[name]?.origin ?? DEFAULT_ORIGIN).replace(/\/+$/, '');
        const apiKey = g.apiKey ?? (process.env.PLATFORM_API_KEY || undefined) ?? (await readKey(`API key for ${origin}: `));
        if (!apiKey) throw new UsageError('No API key: pass --api-key, set PLATFORM_API_KEY, or type it when asked');
        const who = await new ScopeClient({ token: apiKey, baseUrl: `${origin}/api`, maxRetries: 1 }).smoke();
        const next: ProfilesFile = {
          ...saved,
          default_profile: o.default || !saved.default_profile || !saved.profiles[saved.default_profile] ? name : saved.default_profile,
          profiles: { ...saved.profiles, [name]: { origin, api_key: apiKey, org_slug: who.orgSlug } },
        };
        writeProfiles(file, next);
        const out = { profile: name, default: next.default_profile === name, origin, orgSlug: who.orgSlug, scopes: who.scopes, file };
        print(
          g,
          out,
          () =>
            `Logged in to ${origin} as organization ${who.orgSlug} (${who.scopes.length} scopes).\n` +
            `Saved profile '${name}'${out.default ? ' (the default)' : ''} in ${file} (mode 0600).`,
        );
      }),
    );

  program
    .command('logout')
    .description('forget a saved profile (--profile, default the default profile); the key itself stays valid')
    .action(
      run(async (g) => {
        const file = profilesFile();
        const saved = readProfiles(file);
        const name = g.profile ?? saved.default_profile ?? 'default';
        if (!saved.profiles[name]) throw new UsageError(`No saved profile '${name}' in ${file}`);
        const { [name]: _gone, ...profiles } = saved.profiles;
        writeProfiles(file, { ...saved, profiles, default_profile: saved.default_profile === name ? undefined : saved.default_profile });
        print(
          g,
          { profile: name, file },
          () => `Removed profile '${name}' from ${file}; revoke the key itself with \`platform tokens revoke\``,
        );
      }),
    );

  program
    .command('whoami')
    .description('the origin, profile and key a command would use here, and the organization the server says it belongs to')
    .action(
      run(async (g) => {
        const c = creds(g);
        const apiKey = required(c.apiKey, 'platform token', '--api-key', 'PLATFORM_API_KEY');
        const who = await new ScopeClient({ token: apiKey, baseUrl: `${c.origin}/api` }).smoke();
        const out = { origin: c.origin, profile: c.profile ?? null, orgSlug: who.orgSlug, orgId: who.orgId, scopes: who.scopes };
        print(
          g,
          out,
          () =>
            `${c.origin}: organization ${who.orgSlug} (${who.orgId}), ${who.scopes.length} scopes${c.profile ? `; profile '${c.profile}'` : ''}`,
        );
      }),
    );

  program
    .command('profiles')
    .description('list the saved profiles (never their keys)')
    .action(
      run(async (g) => {
        const file = profilesFile();
        const saved = readProfiles(file);
        const rows = Object.entries(saved.profiles).map(([name, p]) => ({
          name,
          default: name === saved.default_profile,
          origin: p.origin,
          orgSlug: p.org_slug ?? null,
          key: `${p.api_key.slice(0, p.api_key.indexOf('_') + 1)}…${p.api_key.slice(-4)}`,
        }));
        print(g, rows, () =>
          rows.length
            ? table([
                ['PROFILE', 'ORIGIN', 'ORGANIZATION', 'KEY'],
                ...rows.map((r) => [`${r.name}${r.default ? ' *' : ''}`, r.origin, r.orgSlug ?? '-', r.key]),
              ])
            : `No saved profiles (${file}); \`platform login\` saves one`,
        );
      }),
    );
}

/** One line from standard input: without echo on a terminal, else the first line of what is piped in. */
async function readKey(prompt: string): Promise<string> {
  const input = process.stdin;
  if (!input.isTTY) {
    let text = '';
    for await (const chunk of input) text += chunk;
    return text.split('\n')[0]!.trim();
  }
  process.stderr.write(prompt);
  input.setRawMode(true);
  input.setEncoding('utf8');
  return new Promise((resolve) => {
    let typed = '';
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          input.setRawMode(false);
          input.off('data', onData);
          input.pause();
          process.stderr.write('\n');
          return resolve(typed.trim());
        }
        if (ch === '\u0003') process.exit(130); // Ctrl-C
        typed = ch === '\u007f' ? typed.slice(0, -1) : typed + ch;
      }
    };
    input.on('data', onData);
  });
}
