import type { Deps } from '../context.ts';
import { allowedOriginsOf, anyBrandAllows } from './store.ts';

/**
 * Which browser origins partner connect admits (CORS), from the brands'
 * `allowed_origins` (config.ts). The real request is checked against its
 * key's brand; a preflight carries no key, so it is answered for an origin
 * some brand allows. Answers are cached per process the way credentials are
 * (credential-cache.ts): a connect configuration change announces itself,
 * which empties this cache on every process, and a cached answer is used only
 * once the cache is fresh as of the request's arrival. Without the
 * credential cache every answer reads the database.
 */
const MAX_ENTRIES = 10_000;

export class ConnectOrigins {
  private brands = new Map<string, ReadonlySet<string>>();
  private anyBrand = new Map<string, boolean>();

  constructor(private readonly deps: Pick<Deps, 'db' | 'credentials'>) {
    deps.credentials?.subscribe(() => {
      this.brands.clear();
      this.anyBrand.clear();
    });
  }

  /** Whether the brand lists `origin` in its allowed_origins. */
  async allowedFor(brandId: string, origin: string, asOf = performance.now()): Promise<boolean> {
    const cached = await this.cached(this.brands, brandId, asOf);
    if (cached) return cached.has(origin);
    const generation = this.deps.credentials?.current;
    const origins = new Set(((await allowedOriginsOf(this.deps.db.prisma, brandId)) as string[] | undefined) ?? []);
    this.store(this.brands, generation, brandId, origins);
    return origins.has(origin);
  }

  /** Whether any brand lists `origin` (what a preflight, which carries no key, is answered by). */
  async allowedByAnyBrand(origin: string, asOf = performance.now()): Promise<boolean> {
    const cached = await this.cached(this.anyBrand, origin, asOf);
    if (cached !== undefined) return cached;
    const generation = this.deps.credentials?.current;
    const allowed = await anyBrandAllows(this.deps.db.prisma, origin);
    this.store(this.anyBrand, generation, origin, allowed);
    return allowed;
  }

  private async cached<V>(map: Map<string, V>, key: string, asOf: number): Promise<V | undefined> {
    const cache = this.deps.credentials;
    if (!cache || !map.has(key) || !(await cache.fresh(asOf))) return undefined;
    return map.get(key);
  }

  private store<V>(map: Map<string, V>, generation: number | undefined, key: string, value: V): void {
    if (generation === undefined || generation !== this.deps.credentials?.current) return;
    if (map.size >= MAX_ENTRIES) map.clear();
    map.set(key, value);
  }
}
