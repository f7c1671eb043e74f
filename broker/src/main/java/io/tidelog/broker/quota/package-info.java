/**
 * Client quotas as Kafka enforces them (KIP-13, KIP-55, KIP-219): the quota of a user and client id
 * found by Kafka's precedence, rates measured with kafka-clients' own windowed {@code Rate}
 * sensors, and the throttle time a client over its quota is given and its connection muted for.
 */
package io.tidelog.broker.quota;
