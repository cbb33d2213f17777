import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { applyMigrations } from '../database/apply-migrations.js';
import { type CommandGroup, out, withContext } from './command.js';

/** `patchbay migrate`. */
export const migrateCommands: CommandGroup = (program) => {
  program
    .command('migrate')
    .summary('Apply pending database migrations')
    .description(
      'Apply pending database migrations. On PostgreSQL they run under an advisory lock: this waits while an ' +
        'instance starting meanwhile applies them.',
    )
    .action(() =>
      withContext('patchbay migrate', false, async (ctx) => {
        const applied = await applyMigrations(ctx.get(DataSource), ctx.get(AppConfig).DATABASE_URL);
        out(applied.length ? `Applied: ${applied.map((m) => m.name).join(', ')}` : 'Database is up to date');
      }),
    );
};
