import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { cliReference } from './cli-reference.js';
import { buildProgram } from './cli.js';

function leafCommands(command: Command): Command[] {
  const subcommands = command.commands.filter((sub) => sub.name() !== 'help');
  return subcommands.length === 0 ? [command] : subcommands.flatMap(leafCommands);
}

describe('the CLI reference', () => {
  it('is docs/cli.md as committed (run `npm run docs` after changing a command)', async () => {
    const file = 'docs/cli.md';
    const generated = await prettier.format(cliReference(buildProgram()), {
      ...(await prettier.resolveConfig(file)),
      filepath: file,
    });
    expect(readFileSync(file, 'utf8')).toBe(generated);
  });

  it('gives every command its usage line and every option its flags', () => {
    const program = buildProgram();
    const page = cliReference(program);
    const help = program.createHelp();
    const leaves = leafCommands(program);
    expect(leaves.length).toBeGreaterThan(10);
    for (const command of leaves) {
      expect(page).toContain(help.commandUsage(command));
      for (const option of command.options) {
        expect(page, `${command.name()} ${option.flags}`).toContain(option.flags);
      }
    }
  });
});
