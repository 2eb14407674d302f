-- Each hand-out first expires the agent's unacknowledged deliveries past their deadline. Through
-- deliveries_pending (agent_id, seq) that read every one of them, and the table's row of each for
-- its deadline, at every hand-out: an agent that fell behind made each hand-out slower, and fell
-- further behind. Through this index it reads only what is due.
CREATE INDEX deliveries_agent_due ON deliveries (agent_id, expires_at) WHERE status IN ('queued', 'delivered');
