import { ProjectsService } from '../projects/projects.service.js';
import { type CommandGroup, out, outResult, withContext } from './command.js';
import { CLI_ACTOR } from '../audit/actor.js';

/** `patchbay projects …`. */
export const projectsCommands: CommandGroup = (program) => {
  const projects = program.command('projects').description('Manage projects');

  projects
    .command('create')
    .description(
      'Create a project and its first API key (the key is shown once). --json prints exactly ' +
        '{"project_id": "...", "api_key": "..."}.',
    )
    .summary('Create a project and its first API key (the key is shown once)')
    .requiredOption('--name <name>', 'project name')
    .option('--json', 'print {"project_id", "api_key"} as JSON')
    .action((options: { name: string; json?: boolean }) =>
      withContext('patchbay projects create', true, async (ctx) => {
        const created = await ctx.get(ProjectsService).createProject(CLI_ACTOR, options.name);
        outResult({ project_id: created.project_id, api_key: created.api_key }, options.json, (project) => {
          out(`Project ${project.project_id} created.`);
          out(`API key (shown once, store it now): ${project.api_key}`);
        });
      }),
    );
};
