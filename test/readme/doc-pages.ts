import { resolve } from 'node:path';
import { guidePages } from '../../rest/service/guide-pages.ts';

export const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The pages the docs test runs: every page under docs/ in the docs map's order, then the README, whose tour shows
 * nothing of what the pages did before it, so the pages' outputs stay those of a fresh server.
 */
export const docPages = (): string[] => [...guidePages().map((page) => `docs/${page}`), 'README.md'];
