#!/usr/bin/env node
// Launcher for the `platform` CLI: the package runs its TypeScript sources
// through tsx (no build step), so register tsx's loader, then load the CLI.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/platform.ts');
