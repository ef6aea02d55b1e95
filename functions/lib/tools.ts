/** The configured tool catalogue (the tools and their zod schemas): for the MCP function and the worker only. */
import { toolCatalogue } from '../tools/index.ts';
import { config } from './config.ts';

export const tools = toolCatalogue(config.toolset);
