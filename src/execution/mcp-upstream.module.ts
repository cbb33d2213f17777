import { Module } from '@nestjs/common';
import { McpUpstream } from './mcp-upstream.js';

/** The client of remote MCP servers, shared by execution and by the servers' registration (src/mcp-servers). */
@Module({
  providers: [McpUpstream],
  exports: [McpUpstream],
})
export class McpUpstreamModule {}
