/** The database layer outside its folder: its module, the connection options and the embedded server. */
export { DatabaseModule } from './database.module.js';
export { databaseOptions } from './database-options.js';
export { EmbeddedDatabase } from './embedded-database.js';
export { ChangeNotifications } from './change-notifications.js';
