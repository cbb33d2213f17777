import { CLI_ACTOR } from '../audit/actor.js';
import { type RotationReport, SecretsRotationService } from '../secrets/secrets-rotation.service.js';
import { parsePositiveInt } from './arguments.js';
import { type CommandGroup, CommandError, out, outResult, withContext } from './command.js';

/** `patchbay secrets …`. */
export const secretsCommands: CommandGroup = (program) => {
  const secrets = program.command('secrets').description('Manage the keys that seal stored secrets');

  secrets
    .command('rotate')
    .summary('Re-seal every stored secret under the newest key of SECRETS_KEYS')
    .description(
      'Re-seal every stored secret (linked-account credentials, configuration and app client secrets, ' +
        'connect-link webhook secrets, pending OAuth 2.0 verifiers) under the newest key of SECRETS_KEYS, in ' +
        'batches. Resumable and safe while the service runs. Exits 1 when values remain under an older key, ' +
        'saying why.',
    )
    .option('--batch-size <n>', 'rows per transaction (default 100)', parsePositiveInt)
    .option('--json', 'print the report as JSON')
    .action((options: { batchSize?: number; json?: boolean }) =>
      withContext('patchbay secrets rotate', true, async (ctx) => {
        const report = await ctx.get(SecretsRotationService).rotate(CLI_ACTOR, { batchSize: options.batchSize });
        outResult(report, options.json, printRotationReport);
        if (report.remaining > 0) {
          throw new CommandError(
            report.unreadable > 0
              ? `${report.unreadable} value(s) are sealed with a key that is not in the ring; add it to SECRETS_KEYS and run again`
              : `${report.remaining} value(s) were written under an older key meanwhile (an instance without the new ring?); run again`,
          );
        }
      }),
    );
};

function printRotationReport(report: RotationReport): void {
  out(`Newest key: ${report.key_id}. Re-sealed ${report.resealed} value(s); ${report.remaining} not under it.`);
  for (const column of report.columns) {
    out(
      `  ${column.column}: ${column.resealed} re-sealed, ${column.changed_concurrently} changed meanwhile, ` +
        `${column.unreadable} unreadable, ${column.remaining} remaining`,
    );
  }
}
