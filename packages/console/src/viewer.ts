import type { Brand, Organization, Viewer } from './schema.ts';

/** The signed-in platform token as the API describes it (GraphQL `viewer`): its scopes decide what the console shows. */
export type SignedViewer = Pick<Viewer, 'tokenId' | 'scopes'> & {
  organization: Pick<Organization, 'id' | 'slug' | 'name'>;
  brands: Pick<Brand, 'id' | 'slug' | 'name'>[];
};

export const VIEWER = '{ viewer { tokenId scopes organization { id slug name } brands { id slug name } } }';
