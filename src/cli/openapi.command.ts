import { writeFileSync } from 'node:fs';
import type { CommandGroup } from './command.js';

/** `patchbay openapi`. */
export const openApiCommands: CommandGroup = (program) => {
  program
    .command('openapi')
    .description('Print the OpenAPI document (or write it to a file)')
    .option('--out <file>', 'write to this file instead of standard output')
    .action(async (options: { out?: string }) => {
      // Loaded here only: the HTTP application's modules take over a second to load.
      const { generateOpenApi } = await import('../api-app.js');
      const text = `${JSON.stringify(await generateOpenApi(), null, 2)}\n`;
      if (options.out) {
        writeFileSync(options.out, text);
      } else {
        process.stdout.write(text);
      }
    });
};
