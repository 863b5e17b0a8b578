import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { RecoveryCode } from './recovery-code.entity.js';
import { TwoFactorCredential } from './two-factor-credential.entity.js';

/** A person's authenticator and recovery codes; every query is scoped by the person's id. */
@Injectable()
export class TwoFactorRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  findCredential(userId: number): Promise<TwoFactorCredential | null> {
    return this.dataSource.getRepository(TwoFactorCredential).findOneBy({ userId });
  }

  async hasCredential(userId: number, manager = this.dataSource.manager): Promise<boolean> {
    return (await manager.getRepository(TwoFactorCredential).countBy({ userId })) > 0;
  }

  /**
   * The person's recovery codes: how many are unused, and which set they are (the highest id:
   * every new set is inserted after the one it replaces; 0 for none).
   */
  async recoveryCodesOf(
    userId: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<{ left: number; version: number }> {
    const row = await manager
      .getRepository(RecoveryCode)
      .createQueryBuilder('c')
      .select('COUNT(CASE WHEN c.used_at IS NULL THEN 1 END)', 'left')
      .addSelect('MAX(c.id)', 'version')
      .where('c.user_id = :userId', { userId })
      .getRawOne<{ left: number | string; version: number | string | null }>();
    return { left: Number(row?.left ?? 0), version: Number(row?.version ?? 0) };
  }

  /**
   * Whether the person has an authenticator, its row locked until `manager`'s transaction ends
   * (SQLite's transactions hold the whole file already).
   */
  async lockCredential(manager: EntityManager, userId: number): Promise<boolean> {
    const found = await manager.getRepository(TwoFactorCredential).findOne({
      select: { userId: true },
      where: { userId },
      ...(manager.connection.options.type === 'better-sqlite3'
        ? {}
        : { lock: { mode: 'pessimistic_write' as const } }),
    });
    return found !== null;
  }

  countUnusedRecoveryCodes(userId: number): Promise<number> {
    return this.dataSource.getRepository(RecoveryCode).countBy({ userId, usedAt: IsNull() });
  }

  async insertCredential(
    manager: EntityManager,
    credential: Pick<TwoFactorCredential, 'userId' | 'secret' | 'lastUsedStep'>,
  ): Promise<void> {
    await manager.getRepository(TwoFactorCredential).insert(credential);
  }

  /** The person's recovery codes become exactly these (by hash): every earlier one stops working. */
  async replaceRecoveryCodes(
    manager: EntityManager,
    userId: number,
    hashes: string[],
  ): Promise<void> {
    const codes = manager.getRepository(RecoveryCode);
    await codes.delete({ userId });
    await codes.insert(hashes.map((codeHash) => ({ userId, codeHash, usedAt: null })));
  }

  /** Removes the authenticator and every recovery code; says whether there was one. */
  async deleteAll(manager: EntityManager, userId: number): Promise<boolean> {
    await manager.getRepository(RecoveryCode).delete({ userId });
    const result = await manager.getRepository(TwoFactorCredential).delete({ userId });
    return (result.affected ?? 0) > 0;
  }

  /**
   * Records `step` as the last one accepted, unless it (or a later one) already was: one
   * conditional UPDATE, so of two sign-ins racing with one code only one gets in.
   */
  async advanceStep(manager: EntityManager, userId: number, step: number): Promise<boolean> {
    const result = await manager
      .getRepository(TwoFactorCredential)
      .createQueryBuilder()
      .update()
      .set({ lastUsedStep: step })
      .where('user_id = :userId', { userId })
      .andWhere('(last_used_step IS NULL OR last_used_step < :step)', { step })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /** Marks the person's unused code with this hash used; false when there is none. */
  async consumeRecoveryCode(
    manager: EntityManager,
    userId: number,
    codeHash: string,
    at: Date,
  ): Promise<boolean> {
    const result = await manager
      .getRepository(RecoveryCode)
      .update({ userId, codeHash, usedAt: IsNull() }, { usedAt: at });
    return (result.affected ?? 0) > 0;
  }
}
