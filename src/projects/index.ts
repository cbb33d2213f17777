/** What the projects module offers outside it: its module, and the pieces that make and check API keys in process. */
export { ProjectsModule } from './projects.module.js';
export { ProjectsRepository } from './projects.repository.js';
export { ProjectsService } from './projects.service.js';
export { HeaderApiKeyStrategy } from './header-api-key.strategy.js';
export { KnownKeys } from './known-keys.js';
