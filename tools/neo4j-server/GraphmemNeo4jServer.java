// A genuine Neo4j Community DBMS in one JVM, for graphmem's tests and for developers: the same
// DatabaseManagementServiceFactory + CommunityEditionModule the `neo4j` launcher uses, which adds
// the Bolt server and, when HTTP is on, the web server (with the Neo4j Browser when its jar is on
// the classpath). Started by scripts/neo4j_server.py; blocks until killed (SIGTERM shuts down
// cleanly).
//
// Usage: java <flags> -cp "lib/*:classes" GraphmemNeo4jServer HOME BOLT_PORT HTTP_PORT(0 = off)
// Env:   NEO4J_PASSWORD    (>= 8 chars) auth on, user neo4j gets it; unset: auth off
//        NEO4J_PAGECACHE   page cache size (default 256m)
//        NEO4J_EXTRA_CONF  ';'-separated key=value lines added to the generated neo4j.conf
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.logging.log4j.Log4jLogProvider;

public class GraphmemNeo4jServer {
    public static void main(String[] args) throws Exception {
        Path home = Path.of(args[0]).toAbsolutePath();
        int bolt = Integer.parseInt(args[1]);
        int http = Integer.parseInt(args[2]);
        String password = System.getenv("NEO4J_PASSWORD");
        String pagecache = System.getenv().getOrDefault("NEO4J_PAGECACHE", "256m");
        Files.createDirectories(home);

        List<String> conf = new ArrayList<>(List.of(
                // keys one version knows and another does not are not fatal
                "server.config.strict_validation.enabled=false",
                "server.default_listen_address=127.0.0.1",
                // 127.0.0.1, not localhost (which may resolve to ::1)
                "server.default_advertised_address=127.0.0.1",
                // both connectors are off by default when the DBMS is embedded
                "server.bolt.enabled=true",
                "server.bolt.listen_address=127.0.0.1:" + bolt,
                "server.bolt.advertised_address=127.0.0.1:" + bolt,
                "server.http.enabled=" + (http > 0),
                "server.http.listen_address=127.0.0.1:" + Math.max(http, 0),
                "server.http.advertised_address=127.0.0.1:" + Math.max(http, 0),
                "server.https.enabled=false",
                "dbms.security.auth_enabled=" + (password != null),
                "server.memory.pagecache.size=" + pagecache,
                "dbms.usage_report.enabled=false",
                // the Browser fetches nothing from outside (no usage data, no remote guides)
                "browser.allow_outgoing_connections=false"));
        String extra = System.getenv("NEO4J_EXTRA_CONF");
        if (extra != null) {
            for (String line : extra.split(";")) {
                if (!line.isBlank()) conf.add(line.trim());
            }
        }
        Path confFile = home.resolve("neo4j.conf");
        Files.write(confFile, conf);

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setUserLogProvider(new Log4jLogProvider(System.out))
                .loadPropertiesFromFile(confFile)
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(dbms::shutdown));

        GraphDatabaseService db = dbms.database("neo4j");
        for (int i = 0; ; i++) {  // the default database may still be starting
            try {
                db.executeTransactionally("RETURN 1");
                break;
            } catch (RuntimeException e) {
                if (i > 1200) throw e;
                Thread.sleep(100);
            }
        }
        if (password != null) {  // Community has ALTER USER on the system database
            try {
                dbms.database("system").executeTransactionally(
                        "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED",
                        Map.of("pw", password));
            } catch (RuntimeException e) {
                // a restart on the same home: the password is already this one
                if (!String.valueOf(e.getMessage()).contains("cannot be the same")
                        && (e.getCause() == null
                            || !String.valueOf(e.getCause().getMessage()).contains("cannot be the same"))) {
                    throw e;
                }
            }
        }
        System.out.println("NEO4J_READY bolt://127.0.0.1:" + bolt
                + (http > 0 ? " http://127.0.0.1:" + http + "/browser/" : ""));
        System.out.flush();
        Thread.currentThread().join();
    }
}
