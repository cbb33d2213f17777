/** What the apps module offers outside it (the benchmarks build rows with these, nothing deeper). */
export { AppsModule } from './apps.module.js';
export { AppEntity } from './app.entity.js';
