import { AppsModule } from './apps/apps.module.js';
import { FunctionsModule } from './functions/functions.module.js';

/** The REST resources of /v1; both the HTTP service and the command line are composed from them. */
export const FEATURE_MODULES = [AppsModule, FunctionsModule];
