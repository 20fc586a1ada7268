import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * One long-lived bash process in `cwd`, so variables a command sets are there
 * for the next, as in a reader's terminal. Each command is written to a file
 * and sourced with its output (stdout and stderr together, as a terminal shows
 * them) captured in another file; a marker line on the control stream carries
 * its exit status. Bash leads a process group of its own, so closing the
 * session also ends what its commands left running in the background.
 */
export interface BashSession {
  run(command: string, timeoutMs: number): Promise<{ output: string; exitCode: number }>;
  close(): void;
}

export function bashSession(cwd: string, env: NodeJS.ProcessEnv): BashSession {
  const bash = spawn('bash', ['--noprofile', '--norc'], { cwd, env, stdio: ['pipe', 'pipe', 'inherit'], detached: true });
  let control = '';
  let waiter: (() => void) | undefined;
  bash.stdout.on('data', (d) => {
    control += d;
    waiter?.();
  });
  let exited = false;
  bash.on('exit', () => {
    exited = true;
    waiter?.();
  });
  let n = 0;
  return {
    async run(command, timeoutMs) {
      const id = ++n;
      const script = join(cwd, `.readme-command-${id}.sh`);
      const out = join(cwd, `.readme-output-${id}.txt`);
      writeFileSync(script, `${command}\n`);
      const marker = `__readme_done_${id}__`;
      bash.stdin.write(`source ${script} >${out} 2>&1 </dev/null; echo "${marker} $?"\n`);
      const done = new RegExp(`${marker} (\\d+)\\n`);
      const exitCode = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiter = undefined;
          reject(new Error(`no exit within ${timeoutMs} ms; printed so far:\n${readFileSync(out, 'utf8')}`));
        }, timeoutMs);
        waiter = () => {
          const m = done.exec(control);
          if (!m && !exited) return;
          clearTimeout(timer);
          waiter = undefined;
          if (m) resolve(Number(m[1]));
          else reject(new Error('bash exited'));
        };
        waiter();
      });
      return { output: readFileSync(out, 'utf8'), exitCode };
    },
    close() {
      try {
        process.kill(-bash.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    },
  };
}
