-- Retention: idempotency keys are pruned by age, and a signal is pruned only once no key names it.
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
CREATE INDEX idempotency_keys_signal ON idempotency_keys (signal_id);
