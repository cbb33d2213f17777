import { Module } from '@nestjs/common';
import { RateLimitsRepository } from './rate-limits.repository.js';
import { RateLimitsService } from './rate-limits.service.js';

@Module({
  providers: [RateLimitsRepository, RateLimitsService],
  exports: [RateLimitsService],
})
export class RateLimitsModule {}
