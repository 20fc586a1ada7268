import type { Kind } from './api.ts';
import type { SignedViewer } from './viewer.ts';

/** What a view (src/views/*) is given by the shell (src/main.ts). */
export interface Ctx {
  viewer: SignedViewer | null;
  /** Whether the platform token holds `scope`. */
  has(scope: string): boolean;
  signedIn(kind: Kind): boolean;
}

/** A view draws into `main`; what it returns is called when it is left (to stop its subscriptions). */
export type View = (main: HTMLElement, ctx: Ctx, params: string[]) => void | (() => void);
