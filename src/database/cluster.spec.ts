import { describe, expect, it } from '@jest/globals';
import { clusterKindOf } from './cluster.js';

const variables = (values: Record<string, string>) =>
  Object.entries(values).map(([Variable_name, Value]) => ({ Variable_name, Value }));

describe('clusterKindOf', () => {
  it('should find a Galera node by wsrep_on, on MariaDB Galera and Percona XtraDB Cluster', () => {
    expect(clusterKindOf(variables({ wsrep_on: 'ON' }))).toBe('galera');
    expect(clusterKindOf(variables({ wsrep_on: 'on' }))).toBe('galera');
  });

  it('should find a Group Replication member by its group name', () => {
    const group = { group_replication_group_name: 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee' };
    expect(clusterKindOf(variables(group))).toBe('group-replication');
  });

  it('should take a server with wsrep off, an empty group name or neither variable for a server of its own', () => {
    expect(clusterKindOf(variables({ wsrep_on: 'OFF' }))).toBe('none');
    expect(clusterKindOf(variables({ group_replication_group_name: '' }))).toBe('none');
    expect(clusterKindOf([])).toBe('none');
  });
});
