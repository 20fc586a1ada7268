import { readFileSync } from 'node:fs';
import semver from 'semver';
import { expect, it } from 'vitest';

/**
 * The Node.js versions the README and `engines` promise are true: the running
 * Node satisfies them, and every runtime dependency that supports Node 20 at
 * all supports the oldest 20.x we name. (Dependencies that declare Node 22
 * only are the documented `EBADENGINE` warnings; the suite proves they run.)
 */
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const oldest = semver.minVersion(pkg.engines.node)!.version;

it('README, package.json engines and the Node this suite runs on agree', () => {
  expect(readFileSync(new URL('../../README.md', import.meta.url), 'utf8')).toContain(`Node.js ${oldest.replace(/\.0$/, '')} or newer`);
  expect(semver.satisfies(process.version, pkg.engines.node)).toBe(true);
});

it('every runtime dependency that runs on Node 20 runs on the oldest version we name', () => {
  const tooNew: string[] = [];
  for (const name of Object.keys(pkg.dependencies)) {
    const range = JSON.parse(readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8')).engines?.node as
      | string
      | undefined;
    if (range && semver.intersects(range, '20.x') && !semver.satisfies(oldest, range)) tooNew.push(`${name} needs ${range}`);
  }
  expect(tooNew).toEqual([]);
});
