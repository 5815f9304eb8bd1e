-- probe: a statement that changes nothing, sent before an unordered event's insert only for its OK packet, whose
-- in-transaction flag (SERVER_STATUS_IN_TRANS) says whether the connection is inside a transaction. No parameters,
-- no rows. (An ordered event needs no probe: the key lock's own OK packet carries the flag.)
DO 0
