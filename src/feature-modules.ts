/** The REST resources of /v1; both the HTTP service and the command line are composed from them. */
export const FEATURE_MODULES = [];
