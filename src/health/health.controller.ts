import { Controller, Get, HttpCode } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DatabaseUnavailableError } from '../../libs/common/src/index.js';
import { PublicRoute } from '../projects/api-key.guard.js';

export class HealthStatus {
  @ApiProperty({ example: 'ok' })
  status: string;
}

@ApiTags('health')
@PublicRoute()
@Controller('v1/health')
export class HealthController {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  @Get()
  @HttpCode(200)
  @ApiOperation({ summary: 'Liveness: the process answers', description: 'Needs no API key.' })
  @ApiOkResponse({ type: HealthStatus })
  getHealth(): HealthStatus {
    return { status: 'ok' };
  }

  @Get('ready')
  @HttpCode(200)
  @ApiOperation({ summary: 'Readiness: the database answers', description: 'Needs no API key.' })
  @ApiOkResponse({ type: HealthStatus })
  @ApiServiceUnavailableResponse({ description: 'The database does not answer' })
  async getReadiness(): Promise<HealthStatus> {
    try {
      await this.dataSource.query('SELECT 1');
    } catch {
      throw new DatabaseUnavailableError();
    }
    return { status: 'ready' };
  }
}
