import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppEntity } from './app.entity.js';

/** Queries over the catalogue's apps. "Visible" means public and active: anything else is invisible to the API. */
@Injectable()
export class AppsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  findVisibleByName(name: string): Promise<AppEntity | null> {
    return this.dataSource.getRepository(AppEntity).findOneBy({ name, visibility: 'public', active: true });
  }
}
