import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { expect } from 'vitest';
import { ALL_SCOPES } from '../../src/domain/scope/catalogue.ts';
import type { TestApp } from './app.ts';
import { buildOrg, buildToken, type TestOrg } from './tenant.ts';

/**
 * A brand set up for partner connect through the real routes: a default program, allowed origins, an HS256 and an
 * EdDSA handoff issuer, and a publishable key; `handoff()` signs a handoff as the partner site would (jose), on the
 * app's clock.
 */
export interface ConnectBrand {
  org: TestOrg;
  /** A secret key with every scope, for the brand's own routes. */
  sk: string;
  pk: string;
  pkId: string;
  brandId: string;
  programId: string;
  hs: { id: string; secret: string };
  ed: { id: string; privateKey: KeyObject };
}

export interface HandoffClaims {
  iss?: unknown;
  sub?: unknown;
  jti?: unknown;
  exp?: unknown;
  iat?: unknown;
}

let counter = 0;

/** A handoff signed with HS256 `secret` (or EdDSA `privateKey`); claims default to a fresh jti, 5 minutes of life. */
export async function signHandoff(
  t: Pick<TestApp, 'clock'>,
  key: { alg: 'HS256'; secret: string } | { alg: 'EdDSA'; privateKey: KeyObject },
  claims: HandoffClaims,
): Promise<string> {
  const now = Math.floor(t.clock.now().getTime() / 1000);
  const payload = { sub: 'user-1', jti: `jti-${process.pid}-${++counter}-${Math.random()}`, iat: now, exp: now + 300, ...claims };
  for (const [k, v] of Object.entries(payload)) if (v === undefined) delete (payload as Record<string, unknown>)[k];
  const signingKey = key.alg === 'HS256' ? new TextEncoder().encode(key.secret) : key.privateKey;
  return new SignJWT(payload as Record<string, unknown>).setProtectedHeader({ alg: key.alg }).sign(signingKey);
}

export async function buildConnectBrand(
  t: TestApp,
  opts: {
    origins?: string[];
    brand?: 'main' | 'second';
    defaultProgram?: boolean;
    /** An existing organization and its secret key (all scopes), to set up a second brand of it; else a new one. */
    within?: { org: TestOrg; sk: string };
  } = {},
): Promise<ConnectBrand> {
  const org = opts.within?.org ?? (await buildOrg(t));
  const brand = opts.brand ?? 'main';
  const sk = opts.within?.sk ?? (await buildToken(t, org, ALL_SCOPES)).secret;
  const auth = { token: sk, headers: { 'service-brand': brand } };
  const post = async (path: string, body: unknown) => {
    const res = await t.http.post(`/v1/platform${path}`, body, auth);
    expect(res.status, res.text).toBeLessThan(300);
    return res.body;
  };
  const program = await post('/programs', { name: 'Partners' });
  const programId = (program.program ?? program).id as string;
  await post('/connect_config', {
    allowed_origins: opts.origins ?? ['https://shop.example'],
    ...(opts.defaultProgram === false ? {} : { default_program: programId }),
    display_name: 'Shop',
  });
  const hs = await post('/handoff/issuers', { name: 'Shop HS', algorithm: 'HS256' });
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const ed = await post('/handoff/issuers', { name: 'Shop Ed', algorithm: 'EdDSA', public_key: publicKey.export({ format: 'jwk' }) });
  const pkRes = await t.http.post('/platform/tokens/create', { name: 'site', kind: 'publishable', brand }, { token: org.userToken });
  expect(pkRes.status, pkRes.text).toBe(200);
  return {
    org,
    sk,
    pk: pkRes.body.secret,
    pkId: pkRes.body.token.id,
    brandId: org.brands.find((b) => b.slug === brand)!.id,
    programId,
    hs: { id: hs.id, secret: hs.secret },
    ed: { id: ed.id, privateKey },
  };
}

/** A handoff for `b`'s HS256 issuer. */
export const hsHandoff = (t: Pick<TestApp, 'clock'>, b: ConnectBrand, claims: HandoffClaims = {}) =>
  signHandoff(t, { alg: 'HS256', secret: b.hs.secret }, { iss: b.hs.id, ...claims });

export const join = (t: TestApp, pk: string, handoff: unknown, headers: Record<string, string> = {}) =>
  t.http.post('/v1/platform/connect/join', { handoff }, { token: pk, headers });
export const status = (t: TestApp, pk: string, session: string, headers: Record<string, string> = {}) =>
  t.http.get('/v1/platform/connect/status', { token: pk, headers: { 'connect-session': session, ...headers } });
export const connect = (t: TestApp, pk: string, session: string, body: unknown, headers: Record<string, string> = {}) =>
  t.http.post('/v1/platform/connect/connect', body, { token: pk, headers: { 'connect-session': session, ...headers } });

/**
 * `owner`'s connect session sent with `outsider`'s publishable key (`status`, `connect`) answers exactly as a missing
 * session does (401, request ids aside), and the session's status through its own key is the same after.
 */
export async function expectSessionConfined(t: TestApp, owner: ConnectBrand, outsider: ConnectBrand): Promise<void> {
  const { session } = (await join(t, owner.pk, await hsHandoff(t, owner))).body;
  const missing = `cs_${'A'.repeat(36)}`;
  const blank = (res: { status: number; text: string }) => ({ status: res.status, body: res.text.replace(/"request_id":"[^"]*"/g, '') });
  const before = (await status(t, owner.pk, session)).body;
  for (const send of [
    (cs: string) => status(t, outsider.pk, cs),
    (cs: string) => connect(t, outsider.pk, cs, { provider: 'youtube', account_id: 'theirs' }),
  ]) {
    const onOurs = blank(await send(session));
    expect(onOurs.status).toBe(401);
    expect(onOurs).toEqual(blank(await send(missing)));
  }
  expect((await status(t, owner.pk, session)).body).toEqual(before);
}
