package weka.classifiers.bayes.hdpbnc;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/** Where the repository's shared test files are: java_bridge/.. is the repository root. */
public final class TestFiles {

  private TestFiles() {
  }

  /** @return the repository root (the parent of java_bridge) */
  public static Path repo() {
    Path here = Paths.get("").toAbsolutePath();
    for (Path p = here; p != null; p = p.getParent()) {
      if (Files.isDirectory(p.resolve("tests").resolve("golden").resolve("models"))) {
        return p;
      }
    }
    throw new IllegalStateException("cannot find tests/golden/models above " + here);
  }

  /** @return tests/golden/models */
  public static Path golden() {
    return repo().resolve("tests").resolve("golden").resolve("models");
  }

  /** @return tests/data */
  public static Path data() {
    return repo().resolve("tests").resolve("data");
  }
}
