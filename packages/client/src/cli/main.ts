#!/usr/bin/env node
// The package's `platform` bin: the user-facing commands only (the server's
// start, migrate and bootstrap live with the server).
import { registerUserCommands, runProgram } from './index.ts';

registerUserCommands();
await runProgram(process.argv);
