import { resolve } from 'node:path';
import { guidePages } from '../../rest/service/guide-pages.ts';

export const ROOT = resolve(import.meta.dirname, '../..');

/** The pages the docs test runs: the README, then every page under docs/ in the docs map's order. */
export const docPages = (): string[] => ['README.md', ...guidePages().map((page) => `docs/${page}`)];
