import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { FunctionEntity } from './function.entity.js';

/** Queries over the catalogue's functions. Visible: the function and its app are both public and active. */
@Injectable()
export class FunctionsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Names of the visible functions of a visible app. */
  async visibleNamesOfApp(appName: string): Promise<string[]> {
    const rows = await this.dataSource
      .getRepository(FunctionEntity)
      .createQueryBuilder('f')
      .select('f.name', 'name')
      .innerJoin('apps', 'a', 'a.name = f.app_name')
      .where('f.app_name = :appName', { appName })
      .andWhere(`f.visibility = 'public' AND f.active AND a.visibility = 'public' AND a.active`)
      .orderBy('f.name')
      .getRawMany<{ name: string }>();
    return rows.map((row) => row.name);
  }
}
