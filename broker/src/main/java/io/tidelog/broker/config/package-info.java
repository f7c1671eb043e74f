/**
 * Broker and topic configuration under Kafka's own names and defaults, parsed and validated with
 * kafka-clients' {@code ConfigDef}: a bad key or value is refused with its name.
 */
package io.tidelog.broker.config;
