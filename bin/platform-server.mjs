#!/usr/bin/env node
// The server as the supervised process (systemd, a container's entry point, a process manager): tsx's loader is
// registered in this process and the server runs in it, so the pid a supervisor starts and signals IS the server,
// which drains and exits 0 on SIGTERM or SIGINT. No npm or shell sits between them to lose a signal.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
