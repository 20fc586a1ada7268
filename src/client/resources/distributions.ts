import type { PagePromise } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';
import { Resource, path, type ListParams } from './resource.ts';
import type { Deployment, Distribution, Operation } from './types.ts';

/**
 * Distributions and their deployments. The spec fixes only `POST
 * /distributions` (create and launch, answering the launch operation);
 * the other verbs follow DESIGN.md: routes of the same family, each
 * answering the operation that carries it out (poll it with operations.wait).
 * Payloads are passed through (camelCase in, snake_case on the wire).
 */
export class Distributions extends Resource {
  /** Creates and launches; resolves with the `distribution.launch` operation (202). The key dedupes the launch too. */
  create(params: Record<string, unknown>, options?: RequestOptions): Promise<Operation> {
    return this.one({ method: 'POST', path: '/distributions', body: params, idempotent: true, options }, 'operation');
  }

  /** Dry run: creates nothing and moves no money. */
  validate(params: Record<string, unknown>, options?: RequestOptions): Promise<Record<string, any>> {
    return this.one({ method: 'POST', path: '/distributions/validate', body: params, idempotent: true, options });
  }

  retrieve(id: string, options?: RequestOptions): Promise<Distribution> {
    return this.one({ method: 'GET', path: path('/distributions/{id}', id), options }, 'distribution');
  }

  list(params: ListParams = {}, options?: RequestOptions): PagePromise<Distribution> {
    return this.page('/distributions', params, options);
  }

  pause(id: string, options?: RequestOptions): Promise<Operation> {
    return this.verb(id, 'pause', options);
  }

  resume(id: string, options?: RequestOptions): Promise<Operation> {
    return this.verb(id, 'resume', options);
  }

  cancel(id: string, options?: RequestOptions): Promise<Operation> {
    return this.verb(id, 'cancel', options);
  }

  private verb(id: string, verb: string, options?: RequestOptions): Promise<Operation> {
    return this.one({ method: 'POST', path: path(`/distributions/{id}/${verb}`, id), idempotent: true, options }, 'operation');
  }
}

export class Deployments extends Resource {
  list(params: ListParams & { distribution?: string } = {}, options?: RequestOptions): PagePromise<Deployment> {
    return this.page('/deployments', params, options);
  }

  retrieve(id: string, options?: RequestOptions): Promise<Deployment> {
    return this.one({ method: 'GET', path: path('/deployments/{id}', id), options }, 'deployment');
  }
}
