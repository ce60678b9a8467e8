import { getMetadataArgsStorage } from 'typeorm';
import { SnakeNamingStrategy } from './snake-naming.strategy';

/** A column of an entity: its property and the column the data source names for it. */
export interface EntityColumn<T> {
  property: keyof T & string;
  column: string;
}

const naming = new SnakeNamingStrategy();

/**
 * An entity's columns in declaration order, read from its decorators and named by the data source's naming strategy,
 * so hand-built SQL (prepared statements built once at load time, before any connection) lists exactly the columns
 * the entity, and therefore the migration drift check, knows. For entities without embedded or inherited columns.
 */
export function entityColumns<T>(entity: new () => T): readonly EntityColumn<T>[] {
  return (
    getMetadataArgsStorage()
      .filterColumns(entity)
      // A column the database fills (insert: false, e.g. events.tx_id) is not one hand-built INSERTs list.
      .filter((args) => args.options.insert !== false)
      .map((args) => ({
        property: args.propertyName as keyof T & string,
        column: naming.columnName(args.propertyName, args.options.name, []),
      }))
  );
}
