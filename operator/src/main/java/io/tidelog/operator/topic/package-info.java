/**
 * The {@link io.tidelog.operator.api.Topic} reconciler: it keeps a real topic as its resource
 * declares, through kafka-clients' Admin against the cluster's bootstrap address. Admin calls of
 * all reconciler threads are coalesced per cluster ({@link io.tidelog.operator.topic.TopicAdmin}),
 * so that thousands of Topics cost tens of requests, not thousands.
 */
package io.tidelog.operator.topic;
