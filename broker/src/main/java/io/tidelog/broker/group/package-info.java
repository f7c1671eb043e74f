/**
 * Consumer groups with Kafka's classic group protocol: membership, generations and rebalances
 * ({@link io.tidelog.broker.group.ClassicGroup}).
 */
package io.tidelog.broker.group;
